"""The ground floor: what every other layer may use and that uses none of them. The machine and
its key, the tiers, why a case failed, and the plug-in registry."""
