"""Headless Chromium for tests that drive a page with playwright-core."""

# Starts headless Chromium for a driver script. The flags keep it from calling home; the resolver rule makes any
# other host unreachable besides.
LAUNCH = """
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"],
  });
"""
