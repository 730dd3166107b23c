"""Container images for the real node, made without a registry or a container engine.

An image is an OCI image layout in a tar: one uncompressed layer, its config and manifest,
and the name containerd imports it under (the ``io.containerd.image.name`` annotation).
The test images are Debian's static busybox with every applet linked (a shell, ``sleep``,
``httpd``, ``dd``… are enough for every scenario: a process that ignores SIGTERM is a
``sleep`` as PID 1, which has no handler), and the pause binary of compose/node/install.sh.
"""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

BUSYBOX = Path("/bin/busybox")
BUSYBOX_IMAGE = "ktrace.test/busybox:1"
PAUSE_IMAGE = "ktrace.test/pause:1"
_LAYER_MEDIA_TYPE = "application/vnd.oci.image.layer.v1.tar"


@dataclass
class Image:
    """A one-layer image: regular files (path → (bytes, mode)) and symlinks (path → target)."""

    name: str
    files: dict[str, tuple[bytes, int]] = field(default_factory=dict)
    symlinks: dict[str, str] = field(default_factory=dict)
    entrypoint: list[str] | None = None
    cmd: list[str] | None = None
    env: list[str] = field(default_factory=lambda: ["PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"])

    def write_archive(self, path: Path) -> Path:
        """Write the OCI layout tar that `ctr images import` takes."""
        layer = self._layer()
        layer_digest = _digest(layer)
        config = _json(
            {
                "architecture": "amd64",
                "os": "linux",
                "config": {"Env": self.env, "Entrypoint": self.entrypoint, "Cmd": self.cmd},
                "rootfs": {"type": "layers", "diff_ids": [layer_digest]},
            }
        )
        manifest = _json(
            {
                "schemaVersion": 2,
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "config": _descriptor("application/vnd.oci.image.config.v1+json", config),
                "layers": [_descriptor(_LAYER_MEDIA_TYPE, layer)],
            }
        )
        index = _json(
            {
                "schemaVersion": 2,
                "manifests": [
                    {
                        **_descriptor("application/vnd.oci.image.manifest.v1+json", manifest),
                        "annotations": {"io.containerd.image.name": self.name},
                    }
                ],
            }
        )
        with tarfile.open(path, "w") as archive:
            _add(archive, "oci-layout", _json({"imageLayoutVersion": "1.0.0"}))
            _add(archive, "index.json", index)
            for blob in (layer, config, manifest):
                _add(archive, f"blobs/sha256/{_digest(blob).split(':')[1]}", blob)
        return path

    def _layer(self) -> bytes:
        out = io.BytesIO()
        with tarfile.open(fileobj=out, mode="w") as layer:
            for directory in sorted(_parents([*self.files, *self.symlinks])):
                info = tarfile.TarInfo(directory)
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                layer.addfile(info)
            for name, (data, mode) in sorted(self.files.items()):
                info = tarfile.TarInfo(name)
                info.size, info.mode = len(data), mode
                layer.addfile(info, io.BytesIO(data))
            for name, target in sorted(self.symlinks.items()):
                info = tarfile.TarInfo(name)
                info.type, info.linkname = tarfile.SYMTYPE, target
                layer.addfile(info)
        return out.getvalue()


def busybox_image() -> Image:
    """Debian's busybox-static at /bin/busybox, every applet a symlink to it; /tmp writable."""
    applets = subprocess.run([str(BUSYBOX), "--list-full"], capture_output=True, text=True, check=True)
    links = {path: "/bin/busybox" for path in applets.stdout.split() if path != "bin/busybox"}
    image = Image(BUSYBOX_IMAGE, files={"bin/busybox": (BUSYBOX.read_bytes(), 0o755)}, symlinks=links)
    image.cmd = ["sh"]
    return image


def pause_image(pause_binary: Path) -> Image:
    return Image(PAUSE_IMAGE, files={"pause": (pause_binary.read_bytes(), 0o755)}, entrypoint=["/pause"])


def _parents(paths: list[str]) -> set[str]:
    return {str(parent) for p in paths for parent in Path(p).parents if str(parent) != "."}


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _descriptor(media_type: str, data: bytes) -> dict[str, object]:
    return {"mediaType": media_type, "digest": _digest(data), "size": len(data)}


def _json(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _add(archive: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    archive.addfile(info, io.BytesIO(data))
