"""A session's plan: which cases it runs (the nightly selection), how long each will take, what
a time budget leaves out, and which share is this runner's. It runs nothing: a plan for a
runner that is not this one is made here too."""
