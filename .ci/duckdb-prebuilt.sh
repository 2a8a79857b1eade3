#!/usr/bin/env bash
# Prints the environment that links the `duckdb` crate against DuckDB's own
# prebuilt libduckdb.so (shipped in the npm package
# @duckdb/node-bindings-linux-x64) instead of compiling DuckDB from source.
# Use with `cargo … --no-default-features`; the default build needs none of it.
#
#   eval "$(bash .ci/duckdb-prebuilt.sh)" && cargo test --no-default-features
#
# The library is cached in ${AIQ_DUCKDB_CACHE:-~/.cache/aiq-libduckdb}/VERSION.
# Exits non-zero (printing nothing on stdout) when it cannot be fetched.
set -euo pipefail
# DuckDB 1.5.6 matches the duckdb crate =1.10506.1 pinned in Cargo.toml.
ver="${AIQ_DUCKDB_NPM_VERSION:-1.5.6-r.1}"
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) pkg="@duckdb/node-bindings-linux-x64" ;;
  Linux-aarch64) pkg="@duckdb/node-bindings-linux-arm64" ;;
  *) echo "no prebuilt DuckDB for $(uname -s)-$(uname -m)" >&2; exit 1 ;;
esac
dir="${AIQ_DUCKDB_CACHE:-$HOME/.cache/aiq-libduckdb}/$ver"
if [ ! -s "$dir/libduckdb.so" ]; then
  command -v npm >/dev/null || { echo "npm is needed to fetch the prebuilt DuckDB" >&2; exit 1; }
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "$pkg@$ver" >/dev/null)
  tar xzf "$tmp"/*.tgz -C "$tmp"
  mkdir -p "$dir"
  cp "$tmp/package/libduckdb.so" "$dir/libduckdb.so.part"
  mv "$dir/libduckdb.so.part" "$dir/libduckdb.so"
fi
echo "export DUCKDB_LIB_DIR='$dir'"
echo "export LD_LIBRARY_PATH='$dir'\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
