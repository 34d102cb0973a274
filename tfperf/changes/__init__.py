"""Change points in a case's series across builds (Apache Otava), and what they are asked."""
