-- expect: not valid JSON
print(aiq.json_decode(string.rep("[", 100000)))
