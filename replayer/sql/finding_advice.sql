-- model: macro(c, detail); depends: cause_advice, cause_sub, cause_sub_advice
-- The advice for one finding: its sub-reason's, else the advice of the cause its sub-reason
-- names (an init container's own failure), else its cause's.
coalesce(
    (SELECT advice FROM cause_sub_advice s WHERE s.cause = c AND s.sub = cause_sub(detail)),
    (SELECT advice FROM cause_advice a WHERE a.cause = cause_sub(detail)),
    (SELECT advice FROM cause_advice a WHERE a.cause = c))
