"""Prints a device token (auth/device_token.h) issued by device_token_fuzz's
key (id 1, secret 32 bytes of 0x5a), computed with Python's own HMAC, so the
fuzzer starts from a token that verifies: bt1-KEY-NONCE-EXPIRY-MAC."""
import hashlib
import hmac
import struct
import sys

key_id, nonce, expiry = 1, int(sys.argv[1], 16), int(sys.argv[2], 16)
message = b"blur-device-token-v1" + struct.pack(">IQQ", key_id, nonce, expiry)
tag = hmac.new(b"\x5a" * 32, message, hashlib.sha256).hexdigest()[:32]
print(f"bt1-{key_id:08x}-{nonce:016x}-{expiry:016x}-{tag}", end="")
