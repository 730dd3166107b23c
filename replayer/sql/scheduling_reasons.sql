-- model: macro(msg); depends: scheduling_category, scheduling_items, scheduling_main
-- A FailedScheduling message as its reasons: each with its node count and category.
(
    SELECT {'nodes_total': coalesce(
                try_cast(nullif(regexp_extract(main, '^(\d+)/(\d+) nodes are available', 2), '')
                         AS INTEGER),
                try_cast(nullif(regexp_extract(msg, 'preemption: (\d+)/(\d+) nodes', 2), '')
                         AS INTEGER)),
            'reasons': [struct_insert(x, category := scheduling_category(x.reason))
                        FOR x IN scheduling_items(main)],
            'preemption': nullif(regexp_extract(msg, '\. preemption: (.*?)\.?\s*$', 1), '')}
    FROM (SELECT scheduling_main(msg) AS main))
