-- expect: field 'remove'
os.remove("data.txt")
