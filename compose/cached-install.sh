# Sourced by compose/*/install.sh: the cache-and-lock preamble of an install from Maven
# Central into a cache outside the clone.
#
#   cached_install NAME VERSION RESULT   # RESULT: the installed directory, under $out
#
# Sets cache ($KTRACE_CACHE, default ~/.cache/ktrace, /NAME), out (cache/VERSION), result
# (out/RESULT) and done_marker. When VERSION is installed it prints result and exits the
# installing script; else it takes the install lock (parallel first runs — two CI jobs, two
# pytest sessions — wait for one another), checks again, and makes a scratch dir $work that
# is removed on exit. The installer ends with `finish_install`.

cached_install() {
  cache=${KTRACE_CACHE:-$HOME/.cache/ktrace}/$1
  out=$cache/$2
  result=$out/$3
  done_marker=$out/installed
  if [ -f "$done_marker" ]; then echo "$result"; exit 0; fi
  mkdir -p "$out"
  exec 9>"$out/.lock"
  flock 9
  if [ -f "$done_marker" ]; then echo "$result"; exit 0; fi
  work=$(mktemp -d "$out/tmp.XXXXXX")
  trap 'rm -rf "$work"' EXIT
}

finish_install() { # mark the version installed and print where it is (the last line)
  touch "$done_marker"
  echo "$result"
}
