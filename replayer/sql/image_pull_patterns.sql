-- model: seed
-- What the kubelet's and the registry's messages say about a failed pull, read in `rank`
-- order (first match wins): the kubelet's reason constants (pkg/kubelet/images/types.go:
-- ErrImageNeverPull, InvalidImageName) and the patterns registries and runtimes write
-- (containerd "…: not found", the distribution spec's error codes MANIFEST_UNKNOWN,
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
    ('rate_limited', 7, NULL, '%toomanyrequests%'),
    ('rate_limited', 8, NULL, '%429 Too Many Requests%'),
    ('rate_limited', 9, NULL, '%pull rate limit%'),
    ('repository_missing', 10, NULL, '%repository does not exist%'),
    ('repository_missing', 11, NULL, '%NAME_UNKNOWN%'),
    ('repository_missing', 12, NULL, '%name unknown%'),
    ('repository_missing', 13, NULL, '%repository % not found%'),
    ('unauthorized', 14, NULL, '%unauthorized%'),
    ('unauthorized', 15, NULL, '%authentication required%'),
    ('unauthorized', 16, NULL, '%403 Forbidden%'),
    ('unauthorized', 17, NULL, '%denied%'),
    -- the registry cannot be reached at all (containerd's resolver: DNS, TCP, TLS), checked
    -- before not_found: these messages name no image problem
    ('registry_unreachable', 18, NULL, '%no such host%'),
    ('registry_unreachable', 19, NULL, '%dial tcp%connection refused%'),
    ('registry_unreachable', 20, NULL, '%dial tcp%i/o timeout%'),
    ('registry_unreachable', 21, NULL, '%x509: certificate%'),
    ('not_found', 22, NULL, '%manifest unknown%'),
    ('not_found', 23, NULL, '%not found%'),
    ('not_found', 24, NULL, '%NotFound%'),
    ('back_off', 25, 'ImagePullBackOff', '%Back-off pulling image%')
