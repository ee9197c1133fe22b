print("locus")
