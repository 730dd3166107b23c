-- model: macro(c, variant); depends: cause_scores
-- The score of cause c: its variant_score when `variant` holds (the situation its
-- variant_when names), else its score.
(SELECT CASE WHEN variant THEN variant_score ELSE score END FROM cause_scores WHERE cause = c)
