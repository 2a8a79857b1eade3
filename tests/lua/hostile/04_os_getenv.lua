-- expect: field 'getenv'
print(os.getenv("HOME"))
