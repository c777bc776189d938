"""Operations and authoring insight: how every question performs, the fleet kept in line with the
database, /metrics."""
