-- expect: leads outside the working directory
print(aiq.read_file("up/secret.txt"))
