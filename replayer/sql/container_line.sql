-- model: macro(b)
-- container_line(…): one container as a detail states it: "app: CrashLoopBackOff, 3
-- restarts, last exit 1 (Error): <its termination message>, <waiting message>".
b.name || ': ' || concat_ws(', ',
        coalesce(b.reason, b.state),
        CASE WHEN b.exit_code IS NOT NULL THEN 'exit ' || b.exit_code END,
        CASE WHEN b.restart_count > 0 THEN b.restart_count || ' restarts' END,
        CASE WHEN b.last_exit_code IS NOT NULL THEN 'last exit ' || b.last_exit_code
             || coalesce(' (' || b.last_reason || ')', '')
             || coalesce(': ' || b.last_message, '') END,
        CASE WHEN NOT contains(coalesce(b.last_message, ''), b.message) THEN b.message END)
