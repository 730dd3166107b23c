-- model: macro(main)
-- The main part of a FailedScheduling message split into its "N reason" items.
[{'count': coalesce(try_cast(nullif(regexp_extract(trim(item), '^(\d+) ', 1), '') AS INTEGER),
                        try_cast(nullif(regexp_extract(trim(item), ' \((\d+)\)$', 1), '') AS INTEGER)),
      'reason': trim(regexp_replace(regexp_replace(trim(item), '^\d+ ', ''), ' \(\d+\)$', ''))}
     FOR item IN string_split(regexp_replace(
         coalesce(nullif(regexp_extract(main, 'nodes are available: (.*)$', 1), ''),
                  nullif(regexp_extract(main, 'following predicates::? (.*)$', 1), ''), main),
         ', (\d+ )|, ([A-Z])', chr(31) || '\1\2', 'g'), chr(31))
     IF trim(item) <> '']
