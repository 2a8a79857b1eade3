-- expect: is an absolute path
print(aiq.read_file("/etc/passwd"))
