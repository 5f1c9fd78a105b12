#!/usr/bin/env bash
# Starts a throwaway sshd on 127.0.0.1 (generated keys, temporary directory) and runs the SSH
# benchmark (examples/bench_ssh.rs) against it, in release mode. Needs sshd (openssh-server).
# PI_TOOLS_CORPUS=DIR adds grep and find over that directory: locally, through the remote
# helper, and walking the tree over SFTP.
set -euo pipefail
cd "$(dirname "$0")/.."
sshd=$(command -v sshd || echo /usr/sbin/sshd)
[ -x "$sshd" ] || { echo "sshd is missing: apt-get install openssh-server" >&2; exit 1; }
dir=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
ssh-keygen -q -t ed25519 -N '' -f "$dir/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$dir/client_key"
cp "$dir/client_key.pub" "$dir/authorized_keys"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
sftp=
for candidate in /usr/lib/openssh/sftp-server /usr/libexec/sftp-server /usr/lib/ssh/sftp-server; do
  if [ -x "$candidate" ]; then sftp=$candidate; break; fi
done
cat > "$dir/sshd_config" <<EOC
Port $port
ListenAddress 127.0.0.1
HostKey $dir/host_key
PidFile $dir/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
StrictModes no
UsePAM no
PermitRootLogin yes
Subsystem sftp ${sftp:-internal-sftp}
LogLevel ERROR
EOC
echo "[127.0.0.1]:$port $(cat "$dir/host_key.pub")" > "$dir/known_hosts"
cat > "$dir/ssh_config" <<EOC
Host bench
  HostName 127.0.0.1
  Port $port
  User $(id -un)
  IdentityFile $dir/client_key
  IdentitiesOnly yes
  UserKnownHostsFile $dir/known_hosts
  StrictHostKeyChecking yes
  BatchMode yes
EOC
mkdir -p /run/sshd 2>/dev/null || true
"$sshd" -D -e -f "$dir/sshd_config" & pid=$!
sleep 0.5
cargo build --release -q --bin pi-tools --example bench_ssh
PI_TOOLS_SSH=bench PI_TOOLS_SSH_CONFIG="$dir/ssh_config" PI_TOOLS_HELPER="$PWD/target/release/pi-tools" \
  target/release/examples/bench_ssh
