# The Kubernetes, etcd and kwok versions the tests run, declared once: sourced by
# compose/k8s/build.sh and compose/node/install.sh (the pause image is built from the same
# kubernetes module the binaries come from). Each may be overridden from the environment.
K8S_VERSION=${K8S_VERSION:-v1.37.2}
ETCD_VERSION=${ETCD_VERSION:-v3.6.16}
KWOK_VERSION=${KWOK_VERSION:-v0.8.0}
