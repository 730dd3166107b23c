-- model: macro(msg)
-- What refused a controller's pod, read from its FailedCreate message (`Error creating: …`,
-- pkg/controller/controller_utils.go; the StatefulSet's `create Pod … failed error: …`):
-- the API server's admission error it quotes, NULL when the message names none of these.
--   service_account: `error looking up service account %s/%s: …` / `no service account
--     specified for pod …` (plugin/pkg/admission/serviceaccount/admission.go);
--   quota: `exceeded quota: …`, `failed quota: …: must specify …`, `status unknown for
--     quota: …`, `insufficient quota to …` (apiserver's admission/plugin/resourcequota;
--     before 1.4 capitalised: `Exceeded quota`, `Failed quota`);
--   limit_range: `minimum|maximum %s usage per %s is …`, `%s max limit to request ratio
--     per %s is …` (plugin/pkg/admission/limitranger/admission.go);
--   pod_security: `violates PodSecurity %q: …` (pod-security-admission/admission);
--   webhook_denied: `admission webhook %q denied the request` (apiserver's
--     admission/plugin/webhook/errors/statuserror.go);
--   webhook_unreachable: `failed calling webhook %q: …` (apiserver's pkg/util/webhook);
--   namespace_terminating: `unable to create new content in namespace %s because it is
--     being terminated` (apiserver's admission/plugin/namespace/lifecycle).
CASE
    WHEN msg ILIKE '%error looking up service account %'
         OR msg ILIKE '%no service account specified for pod %' THEN 'service_account'
    WHEN regexp_matches(msg, '(?i)(exceeded|failed|status unknown for) quota: |insufficient quota to ')
        THEN 'quota'
    WHEN regexp_matches(msg, '(minimum|maximum) \S+ usage per \S+ is |max limit to request ratio per ')
        THEN 'limit_range'
    WHEN msg LIKE '%violates PodSecurity "%' THEN 'pod_security'
    WHEN msg LIKE '%admission webhook "%" denied the request%' THEN 'webhook_denied'
    WHEN msg LIKE '%failed calling webhook "%' THEN 'webhook_unreachable'
    WHEN msg LIKE '%because it is being terminated%' THEN 'namespace_terminating'
    END
