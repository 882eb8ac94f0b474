# Environment for Emscripten on Debian: its optimizer needs Debian's `acorn`, which the
# machine's own Node does not find without NODE_PATH. Source this before emcc/emcmake.
export NODE_PATH="/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}"
