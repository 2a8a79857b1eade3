-- expect: _ENV
_ENV = nil
print("still here")
