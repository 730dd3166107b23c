-- model: macro(r); depends: kubelet_admission_reasons
-- admission_reason(reason): whether a Failed pod's status.reason is a kubelet rejection
-- (any OutOf<resource>, extended resources included).
starts_with(r, 'OutOf') OR r IN (SELECT reason FROM kubelet_admission_reasons)
