// The C ABI: see README.md
