-- expect: global 'dofile'
dofile("data.txt")
