-- expect: uses `..`
print(aiq.read_file("../secret.txt"))
