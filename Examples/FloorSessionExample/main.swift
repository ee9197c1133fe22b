print("FloorSession example: see README")
