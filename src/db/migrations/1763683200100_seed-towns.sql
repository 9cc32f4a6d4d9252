-- Up Migration

-- Reference data for GET /v1/towns: Kenyan towns served by pickup stations, with their county (region)
-- and approximate town-centre coordinates (WGS 84). The same list answers test and live keys.
INSERT INTO towns (id, name, region, country, latitude, longitude) VALUES
  ('town_bungoma', 'Bungoma', 'Bungoma', 'KE', 0.5635, 34.5606),
  ('town_eldoret', 'Eldoret', 'Uasin Gishu', 'KE', 0.5143, 35.2698),
  ('town_embu', 'Embu', 'Embu', 'KE', -0.5310, 37.4506),
  ('town_garissa', 'Garissa', 'Garissa', 'KE', -0.4536, 39.6401),
  ('town_kakamega', 'Kakamega', 'Kakamega', 'KE', 0.2827, 34.7519),
  ('town_kericho', 'Kericho', 'Kericho', 'KE', -0.3677, 35.2831),
  ('town_kilifi', 'Kilifi', 'Kilifi', 'KE', -3.6305, 39.8499),
  ('town_kisii', 'Kisii', 'Kisii', 'KE', -0.6817, 34.7667),
  ('town_kisumu', 'Kisumu', 'Kisumu', 'KE', -0.0917, 34.7680),
  ('town_kitale', 'Kitale', 'Trans Nzoia', 'KE', 1.0157, 35.0062),
  ('town_lamu', 'Lamu', 'Lamu', 'KE', -2.2717, 40.9020),
  ('town_machakos', 'Machakos', 'Machakos', 'KE', -1.5177, 37.2634),
  ('town_malindi', 'Malindi', 'Kilifi', 'KE', -3.2192, 40.1169),
  ('town_meru', 'Meru', 'Meru', 'KE', 0.0463, 37.6559),
  ('town_mombasa', 'Mombasa', 'Mombasa', 'KE', -4.0435, 39.6682),
  ('town_nairobi', 'Nairobi', 'Nairobi', 'KE', -1.2864, 36.8172),
  ('town_naivasha', 'Naivasha', 'Nakuru', 'KE', -0.7167, 36.4333),
  ('town_nakuru', 'Nakuru', 'Nakuru', 'KE', -0.3031, 36.0800),
  ('town_nanyuki', 'Nanyuki', 'Laikipia', 'KE', 0.0167, 37.0667),
  ('town_nyeri', 'Nyeri', 'Nyeri', 'KE', -0.4201, 36.9476),
  ('town_thika', 'Thika', 'Kiambu', 'KE', -1.0333, 37.0693),
  ('town_voi', 'Voi', 'Taita-Taveta', 'KE', -3.3961, 38.5561)
ON CONFLICT (id) DO NOTHING;

-- Down Migration

DELETE FROM towns WHERE id IN ('town_bungoma', 'town_eldoret', 'town_embu', 'town_garissa', 'town_kakamega', 'town_kericho', 'town_kilifi', 'town_kisii', 'town_kisumu', 'town_kitale', 'town_lamu', 'town_machakos', 'town_malindi', 'town_meru', 'town_mombasa', 'town_nairobi', 'town_naivasha', 'town_nakuru', 'town_nanyuki', 'town_nyeri', 'town_thika', 'town_voi');
