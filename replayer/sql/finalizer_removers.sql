-- model: seed
-- Who removes Kubernetes' own finalizers, and when (an object being deleted stays until its
-- last finalizer is gone): pkg/apis/batch/types.go and pkg/controller/job (job-tracking),
-- pkg/volume/util/finalizer.go and pkg/controller/volume/{pvc,pv}protection, the garbage
-- collector (pkg/controller/garbagecollector: foregroundDeletion, orphan), the cloud
-- service controller (staging/src/k8s.io/cloud-provider/service/helpers/helper.go).
(finalizer VARCHAR PRIMARY KEY, remover VARCHAR)
VALUES
    ('batch.kubernetes.io/job-tracking', 'the Job controller (kube-controller-manager) removes it once it has counted the pod in its Job''s status (succeeded or failed) — at once if the Job is gone'),
    ('kubernetes.io/pvc-protection', 'the PVC protection controller (kube-controller-manager) removes it once no pod uses the claim'),
    ('kubernetes.io/pv-protection', 'the PV protection controller (kube-controller-manager) removes it once no claim is bound to the volume'),
    ('foregroundDeletion', 'the garbage collector removes it once the dependents that block their owner''s deletion are gone'),
    ('orphan', 'the garbage collector removes it once it has taken the object''s owner reference off its dependents'),
    ('service.kubernetes.io/load-balancer-cleanup', 'the cloud provider''s service controller removes it once the load balancer is deleted')
