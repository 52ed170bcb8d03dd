# Sourced by the scripts that run on the GPU machine, from the repository root
# with .gpu carried (shared/gpu/README.md): the Vulkan loader to /, the other
# packages to /tmp/gl, the NVIDIA ICD, and the staged libraries' folders
# given as arguments (relative to the root).
for f in .gpu/loader/*.deb; do dpkg -x "$f" /; done
ldconfig
mkdir -p /tmp/gl
for f in .gpu/extra/*.deb; do dpkg -x "$f" /tmp/gl; done
gpu_libs=/tmp/gl/usr/lib/x86_64-linux-gnu
for d in "$@"; do gpu_libs=$PWD/$d:$gpu_libs; done
export LD_LIBRARY_PATH=$gpu_libs:${LD_LIBRARY_PATH:-}
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -f $icd ] && export VK_DRIVER_FILES=$icd
export PYTHONUNBUFFERED=1
