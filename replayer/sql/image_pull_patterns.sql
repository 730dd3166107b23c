-- model: seed
-- What the kubelet's and the registry's messages say about a failed pull, read in `rank`
-- order (first match wins): the kubelet's reason constants (pkg/kubelet/images/types.go:
-- ErrImageNeverPull, InvalidImageName) and the patterns registries and runtimes write
-- (containerd "…: not found", the CRI errors ImageInspectError, RegistryUnavailable and
-- SignatureValidationFailed, the distribution spec's error codes MANIFEST_UNKNOWN,
-- NAME_UNKNOWN, UNAUTHORIZED, DENIED, TOOMANYREQUESTS, Docker Hub's "pull access denied").
-- A message matches `pattern` (ILIKE) or its waiting/Event reason equals `reason`.
(
    sub VARCHAR, rank INTEGER, reason VARCHAR, pattern VARCHAR, PRIMARY KEY (sub, rank))
VALUES
    ('never_pull', 1, 'ErrImageNeverPull', '%is not present with pull policy of Never%'),
    ('never_pull', 2, NULL, '%ErrImageNeverPull%'),
    ('invalid_name', 3, 'InvalidImageName', '%invalid reference format%'),
    ('invalid_name', 4, NULL, '%InvalidImageName%'),
    ('invalid_name', 5, NULL, '%Failed to apply default image tag%'),
    ('invalid_name', 6, NULL, '%couldn''t parse image%'),
    -- the runtime failed to inspect an image the policy says not to pull (IfNotPresent,
    -- Never): no pull was tried, so no registry pattern below applies
    ('inspect_failed', 7, 'ImageInspectError', '%Failed to inspect image%'),
    -- the runtime's CRI error RegistryUnavailable (CRI-O; the kubelet rewrites it in the waiting
    -- message as "… because the registry is unavailable"): the registry, whatever follows
    ('registry_unreachable', 8, 'RegistryUnavailable', '%because the registry is unavailable%'),
    ('registry_unreachable', 9, NULL, '%RegistryUnavailable%'),
    -- the runtime's CRI error SignatureValidationFailed (CRI-O's signature policy; the kubelet
    -- rewrites it as "… because the signature validation failed"): the image, as the node's
    -- policy judges it — pulling again will not help
    ('signature_rejected', 10, 'SignatureValidationFailed', '%because the signature validation failed%'),
    ('signature_rejected', 11, NULL, '%SignatureValidationFailed%'),
    ('rate_limited', 12, NULL, '%toomanyrequests%'),
    ('rate_limited', 13, NULL, '%429 Too Many Requests%'),
    ('rate_limited', 14, NULL, '%pull rate limit%'),
    ('repository_missing', 15, NULL, '%repository does not exist%'),
    ('repository_missing', 16, NULL, '%NAME_UNKNOWN%'),
    ('repository_missing', 17, NULL, '%name unknown%'),
    ('repository_missing', 18, NULL, '%repository % not found%'),
    ('unauthorized', 19, NULL, '%unauthorized%'),
    ('unauthorized', 20, NULL, '%authentication required%'),
    ('unauthorized', 21, NULL, '%403 Forbidden%'),
    ('unauthorized', 22, NULL, '%denied%'),
    -- the registry cannot be reached at all (containerd's resolver: DNS, TCP, TLS), checked
    -- before not_found: these messages name no image problem
    ('registry_unreachable', 23, NULL, '%no such host%'),
    ('registry_unreachable', 24, NULL, '%dial tcp%connection refused%'),
    ('registry_unreachable', 25, NULL, '%dial tcp%i/o timeout%'),
    ('registry_unreachable', 26, NULL, '%x509: certificate%'),
    ('not_found', 27, NULL, '%manifest unknown%'),
    ('not_found', 28, NULL, '%not found%'),
    ('not_found', 29, NULL, '%NotFound%'),
    ('back_off', 30, 'ImagePullBackOff', '%Back-off pulling image%')
