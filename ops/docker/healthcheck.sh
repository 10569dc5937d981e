#!/bin/bash
# Docker's health check: healthy when the node's /ready answers 200 (it serves, and has caught
# up with the leader). Plain bash: the image has no curl.
exec 3<> /dev/tcp/127.0.0.1/7300 || exit 1
printf 'GET /ready HTTP/1.0\r\nHost: localhost\r\n\r\n' >&3
read -r -t 2 status <&3 || exit 1
[[ $status == *" 200 "* ]]
