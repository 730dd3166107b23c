-- model: macro(m)
-- A message as a finding shows it: without the blank lines and spaces around it (a
-- container's termination message usually ends with a newline); NULL when nothing is left.
nullif(trim(m, ' ' || chr(9) || chr(10) || chr(13)), '')
