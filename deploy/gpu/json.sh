# Sourced, not run: the JSON pieces bench.sh and slot.sh write with.

# jstr TEXT: TEXT as a JSON string (control characters and invalid UTF-8 dropped).
jstr() {
  local s
  if command -v iconv >/dev/null 2>&1; then
    s=$(printf '%s' "$1" | iconv -f UTF-8 -t UTF-8 -c 2>/dev/null | tr -d '\000-\010\013\014\016-\037')
  else
    s=$(printf '%s' "$1" | LC_ALL=C tr -cd '\011\012\015\040-\176')
  fi
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\t'/\\t}
  s=${s//$'\r'/\\r}
  s=${s//$'\n'/\\n}
  printf '"%s"' "$s"
}

# jnum X: X when it is a JSON number, else null.
jnum() {
  if [[ ${1:-} =~ ^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$ ]]; then printf '%s' "$1"; else printf null; fi
}

# jget FILE KEY: the first number FILE gives KEY ("" when none).
jget() {
  grep -o "\"$2\": *-\{0,1\}[0-9][0-9.eE+-]*" "$1" 2>/dev/null | head -n 1 | sed 's/^[^:]*: *//'
}
