# The console's browser test (controllers/internal/console, TestConsoleInABrowser)
# drives headless Chromium from the machine's Debian package: the package is the
# browser, its binary is /usr/bin/chromium (CHROMIUM), and nothing is downloaded
# by the test itself.

CHROMIUM ?= /usr/bin/chromium
export CHROMIUM

.PHONY: chromium
chromium: ## Install headless Chromium (Debian package chromium, /usr/bin/chromium) for the console's browser test with apt-get when missing: Debian and root only.
	@if [ -x "$(CHROMIUM)" ]; then exit 0; fi; \
	  if [ ! -f /etc/debian_version ] || ! command -v apt-get >/dev/null; then \
	    echo "the console's browser test needs Chromium at $(CHROMIUM): this machine is not Debian, install it with its package manager (CHROMIUM= names the binary)"; exit 1; fi >&2; \
	  if [ "$$(id -u)" != 0 ]; then \
	    echo "the console's browser test needs the Debian package chromium: run as root, or apt-get install -y chromium first"; exit 1; fi >&2; \
	  echo ">> apt-get install chromium"; \
	  apt-get install -y --no-install-recommends chromium || { apt-get update && apt-get install -y --no-install-recommends chromium; }
