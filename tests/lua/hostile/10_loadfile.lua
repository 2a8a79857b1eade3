-- expect: global 'loadfile'
loadfile("data.txt")()
