-- expect: --allow-write
aiq.write_file("out.txt", "pwned")
