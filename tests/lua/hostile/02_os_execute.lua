-- expect: field 'execute'
os.execute("touch pwned")
