# Sourced by .ci/test and .ci/run: picks how DuckDB is linked and sets
# AIQ_FEATURE_FLAGS for cargo. AIQ_DUCKDB=bundled forces the source build.
AIQ_FEATURE_FLAGS=()
if [ "${AIQ_DUCKDB:-prebuilt}" != bundled ] && aiq_duckdb_env="$(bash .ci/duckdb-prebuilt.sh)"; then
  eval "$aiq_duckdb_env"
  AIQ_FEATURE_FLAGS=(--no-default-features)
  echo "DuckDB: prebuilt library in $DUCKDB_LIB_DIR" >&2
else
  echo "DuckDB: compiled from source (bundled feature)" >&2
fi

# Lua is compiled with the LUAI_MAXSHORTLEN of .cargo/config.toml. Cargo
# does not rebuild a dependency's C code when such a setting changes, so a
# target directory that built Lua with another one has it rebuilt, once.
aiq_lua_target="${CARGO_TARGET_DIR:-target}"
aiq_lua_want="$(grep -E '^(HOST|TARGET)_CFLAGS' .cargo/config.toml || true)"
if [ -d "$aiq_lua_target" ] && [ "$(cat "$aiq_lua_target/.aiq-lua-cflags" 2>/dev/null)" != "$aiq_lua_want" ]; then
  echo "Lua: rebuilt with the settings of .cargo/config.toml" >&2
  cargo clean -q -p mlua-sys
  cargo clean -q -p mlua-sys --release
fi
mkdir -p "$aiq_lua_target"
printf '%s\n' "$aiq_lua_want" >"$aiq_lua_target/.aiq-lua-cflags"
