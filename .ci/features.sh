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
