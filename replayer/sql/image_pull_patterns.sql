-- model: seed
-- What the kubelet's and the registry's messages say about a failed pull, read in `rank`
-- order (first match wins): the kubelet's reason constants (pkg/kubelet/images/types.go:
-- ErrImageNeverPull, InvalidImageName) and the patterns registries and runtimes write
-- (containerd "…: not found", the CRI errors ImageInspectError and RegistryUnavailable, the
-- distribution spec's error codes MANIFEST_UNKNOWN, NAME_UNKNOWN, UNAUTHORIZED, DENIED,
-- TOOMANYREQUESTS, Docker Hub's "pull access denied").
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
    ('rate_limited', 10, NULL, '%toomanyrequests%'),
    ('rate_limited', 11, NULL, '%429 Too Many Requests%'),
    ('rate_limited', 12, NULL, '%pull rate limit%'),
    ('repository_missing', 13, NULL, '%repository does not exist%'),
    ('repository_missing', 14, NULL, '%NAME_UNKNOWN%'),
    ('repository_missing', 15, NULL, '%name unknown%'),
    ('repository_missing', 16, NULL, '%repository % not found%'),
    ('unauthorized', 17, NULL, '%unauthorized%'),
    ('unauthorized', 18, NULL, '%authentication required%'),
    ('unauthorized', 19, NULL, '%403 Forbidden%'),
    ('unauthorized', 20, NULL, '%denied%'),
    -- the registry cannot be reached at all (containerd's resolver: DNS, TCP, TLS), checked
    -- before not_found: these messages name no image problem
    ('registry_unreachable', 21, NULL, '%no such host%'),
    ('registry_unreachable', 22, NULL, '%dial tcp%connection refused%'),
    ('registry_unreachable', 23, NULL, '%dial tcp%i/o timeout%'),
    ('registry_unreachable', 24, NULL, '%x509: certificate%'),
    ('not_found', 25, NULL, '%manifest unknown%'),
    ('not_found', 26, NULL, '%not found%'),
    ('not_found', 27, NULL, '%NotFound%'),
    ('back_off', 28, 'ImagePullBackOff', '%Back-off pulling image%')
