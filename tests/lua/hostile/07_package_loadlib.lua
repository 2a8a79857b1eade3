-- expect: global 'package'
package.loadlib("libc.so.6", "system")("touch pwned")
