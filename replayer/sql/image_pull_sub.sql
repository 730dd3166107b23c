-- model: macro(pull_reason, pull_message); depends: image_pull_patterns
-- image_pull_sub(reason, message): the sub-reason of a failed pull ('unknown' when no
-- pattern matches); `message` is every message read for it, joined.
coalesce((
    SELECT p.sub FROM image_pull_patterns p
    WHERE p.reason = pull_reason OR pull_message ILIKE p.pattern
    ORDER BY p.rank LIMIT 1), 'unknown')
