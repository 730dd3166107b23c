-- model: macro(gap_type, gap_start, gap_end)
-- An unseen stretch as a finding's detail names it: its type and its span.
gap_type || ' ' || strftime(gap_start, '%Y-%m-%dT%H:%M:%SZ') || ' – '
    || strftime(gap_end, '%Y-%m-%dT%H:%M:%SZ')
