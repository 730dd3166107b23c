-- model: macro(msg)
-- What a FailedCreatePodSandBox message says failed: `runtime_handler` (containerd's
-- `no runtime for "x" is configured`, CRI-O's "failed to find runtime handler"), `cni`
-- (the network plugin: "failed to setup network for sandbox", dockershim's "networkPlugin
-- cni failed", "plugin type=…"), else `other`.
CASE
    WHEN msg ILIKE '%no runtime for%' OR msg ILIKE '%runtime handler%'
         OR msg ILIKE '%RuntimeHandler%' THEN 'runtime_handler'
    WHEN msg ILIKE '%network for sandbox%' OR msg ILIKE '%networkPlugin cni%'
         OR msg ILIKE '%plugin type=%' OR msg ILIKE '%cni%' OR msg ILIKE '% network: %'
        THEN 'cni'
    ELSE 'other' END
