-- expect: global 'require'
local os = require("os")
