-- model: macro(gap_type, gap_start, gap_end)
-- An unseen stretch as a finding's detail names it: its type and its span.
gap_type || ' ' || gap_start || ' – ' || gap_end
