-- expect: global 'debug'
debug.sethook()
