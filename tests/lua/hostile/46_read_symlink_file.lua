-- expect: leads outside the working directory
print(aiq.read_file("link.txt"))
