// pause: the first process of a pod's sandbox (main.go), our own program, built by ../build.sh and carried by
// the image scripts/binary_image.py tags registry.k8s.io/pause. No dependencies.
module binding-scheduler.dev/tools/node/pause

go 1.22
