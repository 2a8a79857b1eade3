-- expect: field 'exit'
os.exit(1)
