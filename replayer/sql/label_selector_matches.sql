-- model: macro(match_labels, match_expressions, labels)
-- Whether a label selector selects an object with these labels, as apimachinery's
-- labels.Selector does: every matchLabels pair among them and every matchExpression true —
-- In (the label set, its value listed), NotIn (unset, or its value not listed), Exists,
-- DoesNotExist. An empty selector (no pair, no expression) selects everything; whether a
-- missing selector selects nothing is the caller's (policy/v1 budgets: nothing).
len(list_filter(map_entries(coalesce(match_labels, MAP {})),
                lambda e: labels[e.key] IS DISTINCT FROM e.value)) = 0
AND len(list_filter(coalesce(match_expressions, []), lambda x: NOT CASE x.operator
        WHEN 'In' THEN coalesce(list_contains(x."values", labels[x."key"]), false)
        WHEN 'NotIn' THEN NOT coalesce(list_contains(x."values", labels[x."key"]), false)
        WHEN 'Exists' THEN labels[x."key"] IS NOT NULL
        WHEN 'DoesNotExist' THEN labels[x."key"] IS NULL
        ELSE false END)) = 0
